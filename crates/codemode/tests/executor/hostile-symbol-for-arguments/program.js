return await items.echo({[Symbol.for('k')]: 1, s: Symbol.for('x'), a: [Symbol.for('y'), 2]})
