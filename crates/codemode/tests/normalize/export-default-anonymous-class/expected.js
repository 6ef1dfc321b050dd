async () => {
return (class { constructor() {} });
}