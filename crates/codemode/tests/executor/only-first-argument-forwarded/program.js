return await items.echo({a: 1}, {b: 2})
