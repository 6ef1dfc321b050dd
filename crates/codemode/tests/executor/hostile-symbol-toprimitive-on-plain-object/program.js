return await items.echo({x: 1, [Symbol.toPrimitive]() { throw new Error('never called') }})
