const n = new Number(1); n[Symbol.toPrimitive] = () => { throw new Error('toPrimitive boom') }; await items.echo({x: 1, n})
