return await items.echo({b: 2, a: 1})
