for (let i = 0; i < 1e6; i++) new Promise(() => {}); return 'done'
