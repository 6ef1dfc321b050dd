(async () => { await null; while (true) {} })(); return 'returned first'
