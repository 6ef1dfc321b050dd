const {proxy, revoke} = Proxy.revocable({}, {}); revoke(); await items.echo(proxy)
