items.echo({late: true}); return 1
