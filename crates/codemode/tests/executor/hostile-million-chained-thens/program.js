let p = Promise.resolve(0); for (let i = 0; i < 1e6; i++) p = p.then((x) => x + 1); return await p
