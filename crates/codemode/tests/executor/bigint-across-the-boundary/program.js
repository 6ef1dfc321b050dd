const r = await items.echo({n: 12345678901234567890n}); return [typeof r.n, String(r.n)]
