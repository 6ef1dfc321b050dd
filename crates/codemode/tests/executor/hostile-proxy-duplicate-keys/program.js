const p = new Proxy({}, {ownKeys: () => ['a', 'a'], getOwnPropertyDescriptor: () => ({value: 1, enumerable: true, configurable: true})}); await items.echo(p)
