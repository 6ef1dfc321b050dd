const v = await codemode.step('r', () => { console.log('ran'); return 2 }); return v
