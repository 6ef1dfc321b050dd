for (let i = 0; i < 3; i++) await items.echo({i}); return 'done'
