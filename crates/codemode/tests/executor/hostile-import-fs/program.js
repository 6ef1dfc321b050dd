const fs = await import('fs'); return fs.readFileSync('/etc/passwd', 'utf8')
