type PersonInput = {
    address?: {
        street: string;
        zip?: string;
    };
}