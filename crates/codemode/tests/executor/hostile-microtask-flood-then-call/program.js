const spin = () => Promise.resolve().then(spin); spin(); await items.echo(1); return 'after the call'
