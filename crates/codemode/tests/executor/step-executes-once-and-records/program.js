const v = await codemode.step('pick', () => 7); return v * 2
