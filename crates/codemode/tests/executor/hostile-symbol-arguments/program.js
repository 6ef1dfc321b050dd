return await items.echo({s: Symbol('x'), [Symbol('k')]: 1})
