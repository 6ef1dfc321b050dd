return await items.echo({i: 1})
