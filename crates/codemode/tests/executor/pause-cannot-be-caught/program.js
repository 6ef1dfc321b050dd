try { await items.gate({}) } catch (e) { await items.echo('caught') } finally { await items.echo('finally') } return 'escaped'
