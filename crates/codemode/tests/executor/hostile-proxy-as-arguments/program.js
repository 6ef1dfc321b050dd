const p = new Proxy({}, {ownKeys() { throw new Error('trap') }}); await items.echo(p)
