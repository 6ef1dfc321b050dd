await new Promise(() => {})
