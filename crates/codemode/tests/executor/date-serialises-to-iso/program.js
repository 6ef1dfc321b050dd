const r = await items.echo({d: new Date(0)}); return [r.d, new Date(86400000)]
