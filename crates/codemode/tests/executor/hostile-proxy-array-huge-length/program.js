const p = new Proxy([], {get: (t, k) => k === 'length' ? 1e9 : undefined}); await items.echo(p)
