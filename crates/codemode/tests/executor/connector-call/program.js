const r = await items.echo({title: 'x', n: 1}); return r.title
