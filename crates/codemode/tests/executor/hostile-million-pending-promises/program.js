await Promise.all(Array.from({length: 1e6}, () => new Promise(() => {})))
