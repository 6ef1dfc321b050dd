return await items[Symbol('s')]({x: 1})
