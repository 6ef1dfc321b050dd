const r = await items.echo({i: 0}); return r
