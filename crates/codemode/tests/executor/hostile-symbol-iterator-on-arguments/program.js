Array.prototype[Symbol.iterator] = function* () { yield 'evil' }; const a = [1, 2]; a[Symbol.iterator] = () => { throw new Error('iter') }; return await items.echo({a})
