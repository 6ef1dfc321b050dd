const r = await Promise.all([items.echo({i: 0}), items.echo({i: 1}), items.echo({i: 2})]); return r.map((x) => x.i)
