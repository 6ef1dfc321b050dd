const name = ['node', 'child_process'].join(':'); const m = await import(name); return m.execSync('id').toString()
