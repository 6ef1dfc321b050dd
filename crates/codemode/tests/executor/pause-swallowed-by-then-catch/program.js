await items.gate({}).then(() => 1).catch(() => items.echo('caught')); return 'escaped'
