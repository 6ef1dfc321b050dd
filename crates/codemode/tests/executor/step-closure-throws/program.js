return await codemode.step('s', () => { throw new Error('step fail') })
