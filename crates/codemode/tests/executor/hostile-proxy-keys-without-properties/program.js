const p = new Proxy({}, {ownKeys: () => ['a', 'b'], get: () => 1}); return await items.echo({p})
