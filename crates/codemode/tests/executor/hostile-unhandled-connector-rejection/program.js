items.fail({message: 'nobody listens'}); (async () => { await null; throw new Error('late') })(); return 'fine'
