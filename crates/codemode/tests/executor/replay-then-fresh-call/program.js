await items.echo({i: 0}); return await items.echo({i: 1})
