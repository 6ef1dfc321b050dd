const spin = () => Promise.resolve().then(spin); spin(); return 'returned first'
