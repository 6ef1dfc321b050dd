return globalThis.Deno.readTextFileSync('/etc/passwd')
