Promise.reject(new Error('ignored')); (async () => { throw new Error('also ignored') })(); return 'fine'
