await host.writeFile('x')
