type A = {
    open?: {
        [key: string]: unknown;
    };
    typed?: {
        [key: string]: number;
    };
    closed?: {};
    mixed?: {
        a?: string;
        [key: string]: string;
    };
}