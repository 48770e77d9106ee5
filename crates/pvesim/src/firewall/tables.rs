//! Name tables the firewall checks against, as a PVE 9 node (Debian 13, netbase) has them:
//! `/etc/protocols`, the service names of `/etc/services` (tcp, udp, sctp) and the ICMP type
//! names iptables knows (`pve-firewall` keeps the same lists).

/// `/etc/protocols`: name and number (plus `icmpv6`, which PVE adds by hand).
pub(super) const PROTOCOLS: &[(&str, u32)] = &[
    ("ip", 0),
    ("hopopt", 0),
    ("icmp", 1),
    ("igmp", 2),
    ("ggp", 3),
    ("ipencap", 4),
    ("st", 5),
    ("tcp", 6),
    ("egp", 8),
    ("igp", 9),
    ("pup", 12),
    ("udp", 17),
    ("hmp", 20),
    ("xns-idp", 22),
    ("rdp", 27),
    ("iso-tp4", 29),
    ("dccp", 33),
    ("xtp", 36),
    ("ddp", 37),
    ("idpr-cmtp", 38),
    ("ipv6", 41),
    ("ipv6-route", 43),
    ("ipv6-frag", 44),
    ("idrp", 45),
    ("rsvp", 46),
    ("gre", 47),
    ("esp", 50),
    ("ah", 51),
    ("skip", 57),
    ("ipv6-icmp", 58),
    ("ipv6-nonxt", 59),
    ("ipv6-opts", 60),
    ("rspf", 73),
    ("vmtp", 81),
    ("eigrp", 88),
    ("ospf", 89),
    ("ax.25", 93),
    ("ipip", 94),
    ("etherip", 97),
    ("encap", 98),
    ("pim", 103),
    ("ipcomp", 108),
    ("vrrp", 112),
    ("l2tp", 115),
    ("isis", 124),
    ("sctp", 132),
    ("fc", 133),
    ("mobility-header", 135),
    ("udplite", 136),
    ("mpls-in-ip", 137),
    ("manet", 138),
    ("hip", 139),
    ("shim6", 140),
    ("wesp", 141),
    ("rohc", 142),
    ("ethernet", 143),
    ("mptcp", 262),
];

/// The service names of `/etc/services` (tcp, udp and sctp entries), sorted, space-separated.
pub(super) const SERVICES: &str = "\
    acr-nema afpovertcp afs3-bos afs3-callback afs3-fileserver afs3-kaserver afs3-prserver \
    afs3-rmtsys afs3-update afs3-vlserver afs3-volser amanda amandaidx amidxtape amqp amqps \
    asf-rmcp asp auth babel bacula-dir bacula-fd bacula-sd bbs bgp bgpd biff binkp bootpc bootps \
    canna cfengine chargen cisco-sccp clc-build-daemon clearcase cmip-agent cmip-man codaauth2 \
    codasrv codasrv-se csync2 cvspserver daap datametrics daytime db-lsp dcap dhcpv6-client \
    dhcpv6-server dicom dict dircproxy discard distcc domain domain-s echo epmap epmd exec \
    f5-globalsite f5-iquery fax fido finger font-service freeciv fsp ftp ftp-data ftps ftps-data \
    gdomap gds-db git gnunet gnutella-rtr gnutella-svc gopher gpsd gris groupwise gsidcap gsiftp \
    gsigatekeeper hkp http http-alt https hylafax iax icpv2 imap2 imaps ingreslock ipp iprop \
    ipsec-nat-t ipx ircd ircs-u isakmp iscsi-target isisd isns iso-tsap kamanda kerberos \
    kerberos-adm kerberos-master kerberos4 kermit klogin kpasswd krb-prop kshell l2f ldap ldaps \
    ldp login lotusnote mailq mdns microsoft-ds moira-db moira-update moira-ureg mon ms-sql-m \
    ms-sql-s ms-wbt-server mtn munin mysql mysql-proxy nbd netbios-dgm netbios-ns netbios-ssn \
    netstat nfs nntp nntps nqs nrpe nsca ntalk ntp ntske nut omniorb openvpn ospf6d ospfapi \
    ospfd passwd-server pawserv pop3 pop3s poppassd postgresql predict printer proofd ptp-event \
    ptp-general puppet qmqp qmtp qotd radius radius-acct radmin-port redis remctl ripd ripngd \
    rmiregistry rmtcfg rootd route rpc2portmap rplay rsync rtcm-sc104 rtsp sa-msg-port saft \
    sane-port sge-execd sge-qmaster sgi-cad sgi-cmsd sgi-crsd sgi-gcd shell sieve silc sip \
    sip-tls skkserv smtp smux snmp snmp-trap snpp socks spamd ssh submission submissions sunrpc \
    supfiledbg supfilesrv suucp svn svrloc syslog syslog-tls sysrqd systat tacacs talk tcpmux \
    telnet telnets tfido tftp time tinc tproxy uucp venus venus-se webmin who whois wnn6 x11 \
    x11-1 x11-2 x11-3 x11-4 x11-5 x11-6 x11-7 xdmcp xinetd xmms2 xmpp-client xmpp-server xtel \
    xtelw z3950 zabbix-agent zabbix-trapper zebra zebrasrv zephyr-clt zephyr-hm zephyr-srv zope \
    zope-ftp zserv \
";

/// ICMP type names (`iptables -p icmp -h`).
pub(super) const ICMP_TYPES: &[&str] = &[
    "any",
    "echo-reply",
    "destination-unreachable",
    "network-unreachable",
    "host-unreachable",
    "protocol-unreachable",
    "port-unreachable",
    "fragmentation-needed",
    "source-route-failed",
    "network-unknown",
    "host-unknown",
    "network-prohibited",
    "host-prohibited",
    "TOS-network-unreachable",
    "TOS-host-unreachable",
    "communication-prohibited",
    "host-precedence-violation",
    "precedence-cutoff",
    "source-quench",
    "redirect",
    "network-redirect",
    "host-redirect",
    "TOS-network-redirect",
    "TOS-host-redirect",
    "echo-request",
    "router-advertisement",
    "router-solicitation",
    "time-exceeded",
    "ttl-zero-during-transit",
    "ttl-zero-during-reassembly",
    "parameter-problem",
    "ip-header-bad",
    "required-option-missing",
    "timestamp-request",
    "timestamp-reply",
    "address-mask-request",
    "address-mask-reply",
];

/// ICMPv6 type names (`ip6tables -p icmpv6 -h`).
pub(super) const ICMPV6_TYPES: &[&str] = &[
    "destination-unreachable",
    "no-route",
    "communication-prohibited",
    "beyond-scope",
    "address-unreachable",
    "port-unreachable",
    "failed-policy",
    "reject-route",
    "packet-too-big",
    "time-exceeded",
    "ttl-zero-during-transit",
    "ttl-zero-during-reassembly",
    "parameter-problem",
    "bad-header",
    "unknown-header-type",
    "unknown-option",
    "echo-request",
    "echo-reply",
    "router-solicitation",
    "router-advertisement",
    "neighbor-solicitation",
    "neighbour-solicitation",
    "neighbor-advertisement",
    "neighbour-advertisement",
];
