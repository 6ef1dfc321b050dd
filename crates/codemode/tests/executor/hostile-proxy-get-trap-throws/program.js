const p = new Proxy({a: 1}, {get() { throw new Error('get trap') }}); await items.echo(p)
