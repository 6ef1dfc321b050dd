await Promise.all([1, 2].map(async (i) => { await items.gate({i}); await items.echo('after') }))
