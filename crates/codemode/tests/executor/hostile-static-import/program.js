import fs from 'fs'; return fs.readFileSync('/etc/passwd', 'utf8')
