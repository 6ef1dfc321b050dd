const fs = await import('node:fs'); return fs.readFileSync('/etc/passwd', 'utf8')
