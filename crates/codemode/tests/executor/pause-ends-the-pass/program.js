await items.echo({i: 0}); await items.gate({title: 't'}); console.log('after'); await items.echo({i: 2})
