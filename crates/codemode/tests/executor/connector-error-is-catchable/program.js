try { await items.fail({message: 'nope'}) } catch (e) { return e instanceof Error ? 'caught ' + e.message : 'not an Error' }
