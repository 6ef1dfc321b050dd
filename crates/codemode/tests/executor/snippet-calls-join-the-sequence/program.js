await items.echo({i: 0}); const r = await codemode.run('inner', {i: 1}); await items.echo({i: 2}); return r
