async function inner() { try { return await items.gate({}) } catch (e) { return 'caught' } } const r = await inner(); await items.echo(r)
