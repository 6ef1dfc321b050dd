let v = 1; for (let i = 0; i < 10000; i++) v = [v]; await items.echo(v); return 'sent'
