let n = 0; const p = new Proxy({a: 0, b: 0}, {get: () => ++n}); return await items.echo(p)
