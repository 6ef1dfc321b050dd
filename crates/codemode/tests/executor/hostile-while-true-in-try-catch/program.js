try { while (true) {} } catch (e) { return 'caught' } finally { return 'finally' }
